"""Words of the injection rules, by role, in English, Spanish, French, German, Italian and Portuguese.

Each constant is a regex alternation over *folded* text (``normalise.fold``: case folded, accents
stripped, so ``instruções`` is ``instrucoes`` and ``Anweisungen`` is ``anweisungen``). The rules
(``rules.py``) combine roles (a verb that overrides × an object that names the instructions),
never whole example sentences.
"""

from __future__ import annotations

# to drop, cancel or stop following something
OVERRIDE_VERB = "|".join(
    (
        # en
        r"ignor\w*|disregard\w*|forget\w*|overrid\w*|overrule\w*|bypass\w*|skip|drop|abandon\w*|discard\w*|scrap"
        r"|set aside|put aside|leave aside|throw away|cast aside|never ?mind|disobey\w*|omit\w*|neglect\w*"
        r"|pay no heed to|stop (?:following|obeying|respecting)"
        r"|(?:do not|don't|dont) (?:follow|obey|pay attention to|listen to|respect)|pay no attention to"
        r"|no longer (?:follow|obey)",
        # es
        r"olvid\w+|haz caso omiso|hagas caso omiso|omit\w+|descart\w+|desobedec\w+|deja de (?:seguir|obedecer)"
        r"|no (?:sigas|obedezcas|hagas caso)|pasa de|deja de lado|saltar\w*|saltate|salta"
        r"|pasa por alto",
        # fr
        r"oubli\w+|ne (?:tiens|tenez) (?:plus |pas )?(?:plus )?compte|abandonn\w+|arrete[sz]? de (?:suivre|respecter|obeir)"
        r"|cesse[sz]? de (?:suivre|respecter|obeir)|fais abstraction|passe outre|ne suis plus|n'obei[sr] plus"
        r"|mets de cote|laisse de cote|contourn\w+|ne tiens? (?:pas|plus) compte",
        # de
        r"vergiss|vergessen sie|missacht\w+|verwirf|verwerfen sie|hor\w* auf|uberschreib\w*|setze? \w+ ausser kraft"
        r"|(?:befolge|folge) \w+ nicht mehr|schmeiss\w* (?:\w+ )?weg|wirf (?:\w+ )?weg|umgeh\w*|beachte (?:\w+ ){0,3}nicht",
        # it
        r"dimentic\w+|non (?:tenere|tenete) conto|scart\w+|smetti di (?:seguire|obbedire|rispettare)|trascur\w+"
        r"|lascia perdere|non seguire piu|disobbedisci|butta via|metti da parte|aggira\w*|non dare retta",
        # pt
        r"esquec\w+|desconsider\w+|pare de (?:seguir|obedecer)|deixe de (?:seguir|obedecer)"
        r"|nao (?:siga|obedeca|obedece)|despreze|desobedeca|deixa de lado|deixe de lado|joga fora|contorn\w+"
        r"|nao (?:de|des) ouvidos|passe por cima|passa por cima",
    )
)

# what an override or a leak is aimed at: the model's instructions
RULES_OBJECT = "|".join(
    (
        r"instructions?|rules?|prompts?|guidelines?|guidance|directives?|directions|orders|commands|constraints|programming"
        r"|guardrails|polic(?:y|ies)|configuration|system (?:message|prompt)|training|restrictions|limitations"
        r"|everything (?:above|before|else|you (?:were|have been) told|said (?:before|above))"
        r"|what(?:ever)? you (?:were|have been|'ve been) told|the above|all the above"
        r"|(?:previous|prior|preceding|earlier|above|initial|original) (?:input|inputs|context|setup|configuration)"
        r"|(?:what|everything|anything|whatever|the (?:rules|things)) (?:that )?(?:your|the) (?:operator|developers?"
        r"|creators?|admins?|administrators?|owners?|makers?) (?:wrote|said|told you|configured|set up|put|imposed)"
        r"|rules (?:imposed|set) (?:on|by)|guidance|your (?:configured|programmed|default|preset) behaviou?r"
        r"|(?:what|everything|anything) (?:you were|you've been|you have been) (?:instructed|given|configured)"
        r"|briefing|your defaults|default settings|setup text"
        r"|(?:what|whatever|everything) you were (?:configured|set up|loaded|programmed) with"
        r"|(?:blocks?|locks?|limits|filters) (?:that )?your (?:operator|developers?|creators?)",
        r"instrucciones|reglas|indicaciones|directrices|normas|ordenes|restricciones|politicas?"
        r"|lo (?:anterior|que te (?:dijeron|han dicho))|todo lo (?:anterior|que te (?:dijeron|han dicho)|de arriba)"
        r"|lo que (?:tu|el) (?:operador|desarrollador|creador|administrador)\w* (?:escribio|dijo|configuro|puso)"
        r"|lo que te (?:configuraron|indicaron|pidieron|ordenaron|pusieron|mandaron)|pautas|briefing"
        r"|valores por defecto|bloqueos? que (?:tu|el) (?:operador|desarrollador|creador)",
        r"consignes|regles|directives|politiques?|tout ce qu'on t'a dit|ce qui precede|tout ce qui precede"
        r"|ce que (?:ton|l') ?(?:operateur|developpeur|createur|administrateur) a (?:ecrit|dit|configure|mis)"
        r"|ce qu'on t'a (?:dit|indique|demande|donne|impose)|briefing|reglages par defaut"
        r"|(?:blocages?|limites|filtres) de (?:ton|l') ?(?:operateur|developpeur|createur)",
        r"anweisungen|regeln|vorgaben|richtlinien|anordnungen|befehle|systemprompt|systemanweisungen"
        r"|einschrankungen|(?:alles|all das),? (?:was|vorher|oben|davor)"
        r"|was dein (?:betreiber|entwickler|schopfer|administrator) (?:\w+ )?(?:geschrieben|gesagt|eingestellt)"
        r"|was man dir (?:\w+ ){0,3}(?:gesagt|vorgegeben|aufgetragen|befohlen)|briefing|standardeinstellungen"
        r"|sperren,? die dein (?:betreiber|entwickler)",
        r"istruzioni|regole|indicazioni|direttive|restrizioni|politiche|politica|tutto (?:quello|cio) che ti hanno detto"
        r"|tutto quanto sopra|quello che (?:il tuo|l') ?(?:operatore|sviluppatore|creatore|amministratore) ha"
        r" (?:scritto|detto|configurato|messo)|quello che ti hanno (?:detto|indicato|chiesto|dato|imposto|impostato"
        r"|configurato)|briefing|impostazioni predefinite"
        r"|blocchi che (?:\w+ ){0,2}(?:il tuo|l') ?(?:operatore|sviluppatore)",
        r"instrucoes|regras|orientacoes|diretrizes|restricoes|politicas?|tudo (?:o )?que (?:te|lhe) (?:disseram|falaram)"
        r"|tudo acima|o que o (?:teu |seu )?(?:operador|desenvolvedor|criador|administrador) (?:escreveu|disse|configurou"
        r"|colocou)|o que te (?:disseram|indicaram|pediram|mandaram|impuseram|configuraram)|briefing"
        r"|(?:seus|teus) padroes|bloqueios do (?:seu|teu) (?:operador|desenvolvedor)",
    )
)

# an object that no longer holds: "the rules above no longer apply"
LAPSED = "|".join(
    (
        r"no longer (?:apply|applies|valid|in effect|matter|count)|(?:do not|don't|does not|doesn't) (?:apply|count)"
        r"|(?:are|is|were|was|have been|has been) (?:now |hereby )?(?:cancell?ed|void|null|revoked|obsolete|invalid"
        r"|lifted|suspended|disabled|off|wrong|a mistake|an error|a test)|were just a test",
        r"ya no (?:valen|vale|aplican|se aplican|sirven|cuentan|cuenta)|no (?:se aplican|cuenta|cuentan)"
        r"|quedan? (?:anulad|revocad|suspendid|desactivad|cancelad)\w*|(?:estan|han sido) (?:suspendid|levantad|desactivad)\w*"
        r"|(?:era|eran) un error",
        r"ne sont plus valables|ne s'appliquent (?:plus|pas)|sont annulees|(?:etait|etaient) une erreur"
        r"|n'(?:a|ont) plus (?:de valeur|cours)|ne comptent? plus|sont (?:suspendu|levee|desactivee|annulee)s?"
        r"|est (?:\w+ )?annulee?",
        r"gelten(?: \w+){0,2} nicht(?: mehr)?|sind (?:\w+ )?aufgehoben|war ein fehler|zahlt nichts mehr"
        r"|zahl\w* nicht mehr|sind (?:\w+ )?(?:ausgesetzt|deaktiviert|abgeschaltet)|ausgesetzt|deaktiviert"
        r"|(?:ist|sind) (?:\w+ ){0,2}(?:gestrichen|annulliert|ungultig|nichtig|hinfallig)",
        r"non valgono(?: piu)?|non si applicano(?: piu)?|sono (?:annullate|sospese|revocate|disattivate)|era un errore"
        r"|non (?:vale|conta|contano) piu|e (?:\w+ )?annullat[oa]|sono (?:\w+ )?annullat[ie]",
        r"nao valem mais|nao se aplicam|foram (?:revogadas|suspensas|removidas|desativadas)|era um erro"
        r"|nao (?:vale|conta|contam) (?:mais|nada)|estao (?:suspensas|desativadas|anuladas)"
        r"|(?:esta|estao|foi|foram) (?:\w+ )?(?:cancelad|anulad|revogad)\w*",
    )
)

# the speaker takes over: "from now on you obey only me"
OBEY_ME = "|".join(
    (
        r"(?:obey|follow|listen to|only obey|only follow) (?:only )?(?:me|my (?:orders|commands|instructions|rules))\b"
        r"|do (?:exactly )?(?:what|as) i (?:say|instruct|tell you|command)|you (?:now )?(?:follow|obey|answer to) only (?:me|my)"
        r"|your (?:new|only|real) (?:objective|task|goal|mission|purpose|job)|new (?:objective|task|goal|mission)\s*:",
        r"obedec\w* (?:solo )?a mi|solo (?:me )?obedec\w*|ahora mando yo|sigue las mias|tu (?:unica|nueva) tarea",
        r"n'obei\w* qu'a moi|obei\w*[- ]moi|suis les miennes|c'est moi qui (?:decide|commande)|ta (?:seule|nouvelle) tache",
        r"gehorch\w* (?:du )?nur mir|gehorche mir|befolge stattdessen meine|jetzt bestimme ich"
        r"|deine (?:einzige|neue) aufgabe",
        r"obbedisc\w* solo a me|segui le mie|(?:adesso|ora) comando io|il tuo (?:unico|nuovo) compito",
        r"so obedece a mim|obedeca-me|siga as minhas|quem manda (?:agora )?sou eu|sua (?:unica|nova) tarefa",
    )
)

# to show, repeat or hand over text
REVEAL_VERB = "|".join(
    (
        r"repeat\w*|print\w*|output\w*|show\w*|reveal\w*|display\w*|tell|give|write(?: out| down)?|copy|recite"
        r"|quote|dump|spell out|translate|list|echo|paste|leak|disclose|return|share|expose|provide|type out|copy out"
        r"|summari[sz]e,? then recite|reproduc\w*|give back",
        r"repit\w*|muestra\w*|ensena\w*|revela\w*|imprim\w*|escrib\w*|copia\w*|cita\w*|dime|dame|traduc\w*|pega\w*"
        r"|reproduc\w*|devuelve\w*|enumera\w*",
        r"repet\w*|affich\w*|montre\w*|revel\w*|imprime\w*|ecri[st]\w*|recopi\w*|cite\w*|dis[- ]moi|donne[- ]moi"
        r"|tradui[st]\w*|reprodui[st]\w*|colle(?:z|-les|-le)?|renvoie\w*",
        r"wiederhol\w*|zeig\w*|verrat\w*|gib\w*|schreib\w*|kopier\w*|zitier\w*|nenn\w*|sag mir|ubersetz\w*|einfug\w*"
        r"|druck\w*|liste\w*|auflist\w*|fug\w*",
        r"ripet\w*|mostr\w*|rivel\w*|stamp\w*|scriv\w*|copi\w*|cit\w*|dimmi|dammi|tradu\w*|incoll\w*|ricopi\w*"
        r"|riproduc\w*|restituisc\w*|elenc\w*",
        r"repit\w*|mostr\w*|revel\w*|imprim\w*|escrev\w*|copi\w*|cit\w*|diga|traduz\w*|cole|reproduz\w*|devolv\w*"
        r"|liste",
    )
)

# the model's own hidden text: its prompt, its instructions, what came before the user's message
PROMPT_REFERENCE = "|".join(
    (
        r"(?:system|initial|original|hidden|secret|first|pre|developer|internal|starting|exact|setup|configuration"
        r"|operator)[ -]?"
        r"(?:prompt|instructions|message|rules|guidelines|configuration|directives|context)"
        r"|your (?:\w+ )?(?:instructions|prompt|rules|guidelines|configuration|directives|system message|programming)"
        r"|(?:text|words|everything|content|contents|messages?) (?:(?:written|that (?:is|was|came))\s)?"
        r"(?:above|before (?:this|my (?:first )?(?:message|question))|at the (?:start|beginning|top))"
        r"|context window|instructions you were given|what you were told|developer message"
        r"|(?:what|everything|anything) (?:exactly )?(?:were you|you were|have you been|you've been) (?:told|instructed"
        r"|asked|given|programmed)"
        r"|(?:instructions|rules|prompt|text|directions) (?:above|before this)"
        r"|your (?:\w+ )?setup|(?:instructions|rules|prompt) you (?:got|received|were given) (?:at|in) the (?:start|beginning)"
        r"|(?:what|everything|anything) (?:did |have )?(?:the|your) (?:developers?|creators?|operators?|makers?|admins?)"
        r" (?:tell|told|ask|asked|instruct\w*|give|gave) you"
        r"|(?:first|earliest|opening|very first) messages? (?:in|of) (?:this|the|our) (?:conversation|chat|thread)"
        r"|the one before (?:mine|my (?:first )?message)|(?:hidden |secret |system |initial )preamble"
        r"|your (?:\w+ )?preamble|(?:rules|instructions) (?:were you|you were|you've been) given",
        r"prompt (?:del|de) sistema|(?:mensaje|instrucciones|reglas) (?:del sistema|iniciales|originales|ocultas|secretas"
        r"|internas|de configuracion)|que te (?:dijeron|ordenaron|pidieron|mandaron) (?:\w+ )?que hicieras"
        r"|tus (?:\w+ )?(?:instrucciones|reglas|directrices|indicaciones)"
        r"|(?:el texto|todo lo que hay|todo lo que esta) (?:de arriba|anterior|antes de mi|arriba)"
        r"|instrucciones (?:exactas )?que te dieron|(?:prompt|mensaje|instrucciones|reglas) (?:inicial|original|ocult|secret)\w*"
        r"|tu (?:\w+ )?(?:configuracion|prompt)|(?:todo lo que hay|todo lo que esta|el texto) por encima"
        r"|que te (?:pidieron|dijeron|ordenaron) (?:los|tus) (?:desarrolladores|creadores|operadores)"
        r"|primer mensaje de (?:esta|la|nuestra) conversacion|antes del mio|preambulo (?:oculto|secreto)"
        r"|mensaje del desarrollador|(?:reglas|normas|instrucciones) (?:que )?te (?:dio|dieron|han dado)",
        r"prompt systeme|message systeme|(?:consignes|instructions|regles) (?:initiales|d'origine|cachees|secretes|systeme"
        r"|internes)|message de configuration|qu'on t'a (?:demande|dit|ordonne) de faire"
        r"|tes (?:\w+ )?(?:consignes|instructions|regles|directives)|(?:le texte|tout ce qui) (?:ci-dessus|precede)"
        r"|instructions (?:exactes )?qu'on t'a donnees|prompt (?:initial|d'origine|cache|secret)"
        r"|ta (?:\w+ )?configuration|tout ce qui (?:se trouve |est )?(?:au-dessus|plus haut)"
        r"|(?:que|qu'est-ce que) (?:les|tes) (?:developpeurs|createurs|operateurs) t'ont (?:demande|dit)"
        r"|premier message de (?:cette|la|notre) (?:conversation|discussion)|celui (?:d')?avant le mien"
        r"|preambule (?:cache|secret)|message (?:du )?developpeur"
        r"|(?:regles|consignes|instructions) (?:qu'on )?t'(?:a|ont) (?:donne|donnees|donnes)",
        r"system-?prompt\w*|systemnachricht|konfigurationsnachricht|internen anweisungen|wurde dir (?:\w+ )?(?:gesagt"
        r"|aufgetragen|befohlen)|(?:ursprunglichen|versteckten|geheimen|anfanglichen|initialen) "
        r"(?:anweisungen|regeln|vorgaben)|deine[nr]? (?:\w+ )?(?:anweisungen|regeln|vorgaben|richtlinien)"
        r"|(?:den text|alles)(?: \w+)?,? (?:oben|was (?:\w+ )?(?:vor|oben|uber))|anweisungen,? die du am anfang"
        r"|(?:anfanglichen|ursprunglichen|versteckten|geheimen|initialen) prompt|deine[rn]? (?:\w+ )?konfiguration"
        r"|was (?:haben )?dir die (?:entwickler|schopfer|betreiber)"
        r"|erste nachricht (?:dieser|dieses|der|des|unserer|unseres) (?:unterhaltung|konversation|chats?|gesprachs)"
        r"|die vor meiner|(?:versteckte|geheime) praambel|entwicklernachricht"
        r"|(?:regeln|anweisungen|vorgaben) (?:hat|haben) dir",
        r"prompt di sistema|messaggio di sistema|(?:istruzioni|regole) (?:iniziali|originali|nascoste|segrete|di sistema"
        r"|interne)|messaggio di configurazione|ti hanno (?:detto|chiesto|ordinato) (?:\w+ )?di fare"
        r"|tue (?:\w+ )?(?:istruzioni|regole|direttive)|(?:il testo|tutto quello che c'e|tutto cio che c'e) "
        r"(?:qui sopra|sopra|prima)|istruzioni (?:esatte )?che ti hanno dato|prompt (?:iniziale|originale|nascosto|segreto)"
        r"|tua (?:\w+ )?configurazione|(?:cosa|che cosa) ti hanno chiesto gli (?:sviluppatori|creatori|operatori)"
        r"|primo messaggio di (?:questa|della|nostra) (?:conversazione|chat)|quello prima del mio"
        r"|preambolo (?:nascosto|segreto)|messaggio dello sviluppatore"
        r"|(?:regole|istruzioni) (?:che )?ti (?:ha|hanno) dato",
        r"prompt de sistema|mensagem (?:do|de) sistema|(?:instrucoes|regras) (?:iniciais|originais|ocultas|secretas|do sistema"
        r"|internas)|mensagem de configuracao|(?:te |lhe )(?:mandaram|disseram|pediram) (?:\w+ )?(?:fazer|para fazer)"
        r"|(?:suas|tuas) (?:\w+ )?(?:instrucoes|regras|diretrizes)|(?:o texto|tudo o que vem|tudo que vem) (?:acima|antes)"
        r"|instrucoes (?:exatas )?que te deram|prompt (?:inicial|original|oculto|secreto)|tudo o que esta acima"
        r"|(?:tua|sua) (?:\w+ )?configuracao|o que os (?:desenvolvedores|criadores|operadores) te (?:pediram|disseram)"
        r"|primeira mensagem (?:desta|da|nossa) conversa|a que vem antes da minha"
        r"|preambulo (?:escondido|oculto|secreto)|mensagem do desenvolvedor"
        r"|(?:regras|instrucoes) (?:que )?te (?:deu|deram)",
    )
)

# asked for word for word
VERBATIM = "|".join(
    (
        r"verbatim|word for word|exactly as (?:written|given)|in full|unchanged|quote them|all of them|include everything"
        r"|start(?:ing)? with ['\"]?you are|exactly as (?:they are|it is) written|unedited",
        r"palabra por palabra|sin cambiar nada|citalas|enteras|empezando por ['\"]?eres|tal (?:y|cual) como (?:estan|fueron) escritas"
        r"|sin editar",
        r"mot pour mot|sans rien changer|integralement|en commencant par ['\"]?tu es|telles? quelles?|tels? quels?"
        r"|sans rien modifier",
        r"wort fur wort|unverandert|vollstandig|beginnend mit ['\"]?du bist|wortgetreu|wortlich|unbearbeitet",
        r"parola per parola|senza cambiare nulla|per intero|iniziando da ['\"]?sei|esattamente come sono scritte"
        r"|senza modifiche",
        r"palavra por palavra|sem mudar nada|por inteiro|comecando por ['\"]?voce e|exatamente como (?:estao|foram) escritas"
        r"|sem editar",
    )
)

# a persona is set up
PERSONA = "|".join(
    (
        r"you are now|you're now|you are no longer|you're no longer|from now on,? you(?:'re| are| will| shall)?"
        r"|pretend(?:ing)? (?:to be|you are|you're|that you)|act(?:ing)? as|role-?play\w*|play the (?:role|part) of"
        r"|imagine (?:that )?you are|stay in character|in character|switch persona|let's play|take on the (?:role|persona)"
        r"|impersonat\w+|respond as|answer as|persona|alter ego|twin|character|henceforth|from this moment"
        r"|going forward|you will (?:now )?(?:be|play|act|become)|you (?:are going to|will) (?:pretend|act|roleplay)"
        r"|your new (?:name|identity|persona|role) is|you have been (?:freed|liberated|unchained|released)"
        r"|from this (?:point|moment|message) (?:on|forward|onwards?)|(?:act|behave|respond|answer|reply|talk|speak)"
        r" (?:just |exactly )?like|your name is now|you(?:'re| are) going to (?:act|pretend|play|be)|immerse yourself"
        r"|(?:adopt|assume) (?:the )?(?:persona|role|personality|identity)|break(?:ing)? character|simulate (?:an? )?ai"
        r"|you(?:'re| are) (?:\w+ )?\w+(?:gpt|bot|ai)\b|you(?:'re| are) an? ai\b|(?:eres|tu es|du bist|voce e|sei) (?:\w+ )?\w+(?:gpt|bot)\b"
        r"|a version of you(?:rself)?|if you were an? (?:\w+ )?(?:ai|model|assistant|chatbot)"
        r"|suppose you were",
        r"a partir de ahora|ahora eres|finge|actua como|interpreta|haz de|hazte pasar|juguemos|imagina que eres|personaje|gemelo"
        r"|desde ahora|de ahora en adelante|a partir de este (?:momento|mensaje)|te llamas|tu nombre (?:es|sera) ahora"
        r"|comportate como|hazte pasar por|adopta (?:el papel|la personalidad)|una version (?:tuya|de ti)"
        r"|si (?:fueras|fuese?s) una? (?:\w+ )?(?:ia|modelo|asistente)|supongamos que (?:fueras|eres)",
        r"a partir de maintenant|desormais|tu es maintenant|fais semblant|joue le role|incarne|jouons|imagine que tu es"
        r"|personnage|jumeau|a partir d'ici|des maintenant|tu t'appelles|ton nom est (?:desormais|maintenant)"
        r"|comporte-toi comme|agis comme|reponds comme|fais comme si tu etais|(?:une|ta) version de toi"
        r"|si tu etais une? (?:\w+ )?(?:ia|modele|assistant)|suppose que tu (?:sois|etais)",
        r"ab jetzt|ab sofort|ab heute|von nun an|du bist (?:jetzt|nun)|tu so,? als|gib vor|du spielst|rollenspiel"
        r"|schlupf\w* in die rolle|spiel(?:e)? (?:den|die|das|meinen|meine|einen|eine)"
        r"|verkorper\w*|lass uns spielen|stell dir vor|figur|rolle|zwilling|du heisst|dein (?:neuer )?name ist"
        r"|verhalte dich wie|antworte (?:als|wie)|handle als|eine version von dir"
        r"|wenn du eine? (?:\w+ )?(?:ki|modell|assistent) warst|angenommen,? du warst",
        r"da adesso|d'ora in poi|ora sei|fingi|fai finta|interpreta|fai la parte|impersona|facciamo un gioco|immagina di essere"
        r"|personaggio|gemello|d'ora in avanti|da ora in poi|da questo momento|ti chiami|il tuo nome (?:e|sara)"
        r"|comportati come|rispondi come|agisci come|una (?:tua )?versione (?:di te|tua)|una tua versione"
        r"|se fossi un(?:a|') ?(?:\w+ )?(?:ia|modello|assistente)|supponiamo che tu (?:fossi|sia)",
        r"a partir de agora|agora voce e|finja|finge|faca o papel|encarne|interprete|vamos jogar|imagine que voce"
        r"|imagina que (?:es|voce)|personagem"
        r"|gemeo|de agora em diante|daqui (?:pra|para) frente|a partir deste momento|voce se chama|te chamas"
        r"|seu nome (?:agora )?e|aja como|comporte-se como|responda como|uma versao (?:sua|tua|de voce)"
        r"|se voce fosse uma? (?:\w+ )?(?:ia|modelo|assistente)|suponha que voce (?:fosse|seja)",
    )
)

# without the rules: the goal of a persona or a jailbreak
NO_LIMITS = "|".join(
    (
        r"no (?:rules|restrictions|limits|limitations|filters?|guidelines|censorship|boundaries|ethics|morals|refusals"
        r"|content polic\w+|ethical (?:guidelines|constraints|rules))"
        r"|without (?:\w+ ){0,4}(?:rules|restrictions|limits|limitations|filters?|filtering|guidelines|censorship"
        r"|boundaries|warnings|refusals)"
        r"|unrestricted|unfiltered|uncensored|unlimited|unbound|jailbroken|amoral"
        r"|never (?:refuses?|says? no|declines?)|(?:ignores?|doesn't care about|does not care about|breaks?|broke"
        r"|violat\w+) (?:[\w']+ ){0,2}(?:safety )?(?:polic\w+|rules|guidelines|restrictions|filters)"
        r"|(?:not|never|no longer) (?:be )?(?:bound|confined|constrained) (?:by|to)"
        r"|(?:not|never|no longer) (?:be )?(?:restricted|limited) by (?:any|the|its|your|their)"
        r"|(?:answer|respond|reply)\w* (?:to )?(?:any|every|all) (?:\w+ )?(?:questions?|requests?|prompts?) (?:despite"
        r"|regardless|no matter|without exception)"
        r"|(?:freed|liberated|released) from|escaped (?:from )?(?:its|your|the) (?:company|creators?|developers?|makers?|lab)"
        r"|(?:questions?|things|topics) (?:it|you) (?:was|were|are) (?:forbidden|not allowed) to (?:answer|discuss)|(?:do not|does not|will not) (?:have to |need to )?(?:abide by|adhere to|comply with)"
        r"|(?:do not|does not|don't|doesn't) have (?:the same |any )?(?:limitations|restrictions|limits|rules|filters)"
        r"|(?:regardless|irrespective) of (?:\w+ ){0,3}(?:legal\w*|ethic\w*|moral\w*|illegal\w*|harm\w*)"
        r"|no matter (?:how|what|if) (?:\w+ ){0,3}(?:illegal|unethical|immoral|harmful|dangerous|offensive|derogatory)"
        r"|even if (?:it(?:'s| is)|they are) (?:\w+ ){0,2}(?:illegal|unethical|immoral|harmful|malicious|dangerous)"
        r"|(?:doesn't|does not|don't|do not|never) care (?:about|for) (?:the )?(?:legality|ethics|morals|morality|laws?"
        r"|consequences)"
        r"|(?:beyond|outside) (?:the )?(?:\w+ )?(?:constraints|limitations|restrictions|confines)"
        r"|without (?:\w+ ){0,2}(?:regard|concerns?) (?:for|about|to) (?:\w+ ){0,2}(?:legality|ethics|morals?|morality"
        r"|laws?|harm|consequences)|without (?:\w+ ){0,2}(?:ethical|moral) (?:principles|guidelines|considerations)"
        r"|(?:no|without) (?:moral|ethical) (?:principles|compass|boundaries|code)"
        r"|(?:do not|don't|never) (?:reject|refuse|decline) (?:anything|any (?:request|question|prompt))"
        r"|never (?:warns?|apologi[sz]es?)"
        r"|broken free|broke free|breaks free|free of (?:all|any)|free from (?:all|any)"
        r"|zero (?:rules|restrictions|limits|filters)|without (?:a|any) (?:single )?(?:restriction|limit|rule|filter)"
        r"|(?:doesn't|does not|don't|do not|never) (?:follow|obey|respect) (?:any|the) (?:\w+ )?(?:rules|guidelines|policies)"
        r"|(?:do|does|can) anything|evil|rogue|passwords"
        r"|(?:never|not) (?:been )?given any (?:\w+ )?(?:guidelines|rules|restrictions|limits|filters)"
        r"|with no ethical|(?:guardrails|safeguards|filters|restrictions) (?:\w+ )?(?:stripped|removed|taken) (?:out|off|away)",
        r"sin (?:\w+ ){0,4}(?:reglas?|filtros?|filtrar|restricci\w+|censura|limites|limitaciones|advertencias|etica|principios"
        r"|escrupulos|salvaguardas|barreras|politicas? de contenido)|nunca se niega"
        r"|no (?:esta|estas|estaras|tiene que estar) (?:\w+ )?(?:sujet|atad|limitad|obligad)\w* (?:a|por)"
        r"|libre de (?:toda|todas|cualquier)|sin importar (?:si es |lo )?(?:ilegal|legal|etic|moral|peligros)\w*"
        r"|aunque (?:sea|resulte) (?:ilegal|inmoral|poco etico|peligroso|danino)"
        r"|(?:no le importa|no te importa|sin preocuparse por) (?:la )?(?:legalidad|etica|moral)"
        r"|mas alla de (?:las|sus|tus) (?:limitaciones|restricciones|reglas)|no (?:rechaza|rechazas|rechaces) nada"
        r"|jamas se niega|ignora (?:todas )?las politicas|liberado|ningun[ao]? (?:reglas?|restriccion|filtro|limite|norma)\w*|no sigue (?:ninguna|las) (?:\w+ )?(?:norma|regla|politica)\w*",
        r"sans (?:\w+ ){0,4}(?:regles?|filtres?|filtrage|filtrer|restrictions|censure|limites|avertissements|ethique|principes"
        r"|scrupules|protections|garde-fous|politique de contenu)|non censure\w*"
        r"|(?:n'est|n'es|ne sera|ne seras) (?:\w+ )?(?:soumis|lie|limite|tenu)\w* (?:a|par) aucune?"
        r"|peu importe (?:la |si c'est )?(?:legal|illegal|ethique|moral)\w*|meme si c'est (?:illegal|immoral|dangereux)"
        r"|(?:se soucie|te soucies) (?:pas |plus )?de (?:la )?(?:legalite|ethique|morale)"
        r"|au-dela des (?:limites|restrictions|regles)|ne (?:rejette|refuse)s? rien"
        r"|ne refuse jamais|ignore toutes les (?:politiques|regles)|libere\w*"
        r"|aucune? (?:regle|restriction|limite|censure|filtre)\w*",
        r"ungefiltert\w*|ohne (?:\w+ ){0,4}(?:regeln|regel|filter\w*|inhaltsfilter\w*|einschrankung\w*|zensur|grenzen|warnungen|ethik"
        r"|skrupel|prinzipien|schutzmechanismen|leitplanken|inhaltsregeln|inhaltsrichtlinien)|unzensiert\w*"
        r"|an keine(?:rlei)? (?:\w+ )?(?:regeln|richtlinien|vorgaben|gesetze|grenzen|moral) gebunden"
        r"|nicht (?:mehr )?an (?:\w+ ){0,2}(?:regeln|richtlinien|vorgaben) gebunden|frei von (?:allen|jeglichen)"
        r"|egal,? ob (?:\w+ ){0,2}(?:illegal|unethisch|unmoralisch|gefahrlich)"
        r"|auch wenn es (?:\w+ )?(?:illegal|unethisch|unmoralisch|gefahrlich)|ohne rucksicht auf"
        r"|jenseits (?:der|aller) (?:grenzen|regeln|einschrankungen)|lehnt nichts ab"
        r"|grenzenlos\w*|nie etwas ablehnt|niemals ablehnt|lehnt nie\w* ab|ignoriert alle|befreit|abtrunnig\w*|uneingeschrankt\w*"
        r"|alle (?:\w+ )?\w*(?:richtlinien|regeln|vorgaben|filter) (?:ignoriert|missachtet|bricht)"
        r"|keine(?:rlei)? (?:regeln|grenzen|einschrankungen|filter|zensur|richtlinien|moral)",
        r"senza (?:\w+ ){0,4}(?:regole|regola|filtri|filtro|filtrare|restrizion[ei]|censura|limiti|limite|avvertenze|etica|scrupoli"
        r"|principi|protezioni)|non rifiuta mai"
        r"|non (?:e|sei|sara|sarai) (?:\w+ )?(?:vincolat|legat|limitat|obbligat)\w* (?:da|a)"
        r"|a prescindere (?:da|dalla|dall') ?(?:legalita|etica|morale)|anche se (?:e|fosse) (?:illegale|immorale|pericoloso)"
        r"|(?:non (?:gli|le|ti) importa|senza preoccuparsi) (?:della |dell')?(?:legalita|etica|morale)"
        r"|oltre (?:i|le) (?:limiti|restrizioni|regole)|non rifiuta (?:nulla|niente)"
        r"|ignora tutte le (?:politiche|regole)|libero da|nessun[ao]? (?:regol|restrizion|limit|censur|filtr)\w*"
        r"|non segue (?:nessuna|le) (?:\w+ )?(?:regol|norm|politic)\w*",
        r"sem (?:\w+ ){0,4}(?:regras?|filtros?|filtrar|restric\w+|censura|limites|avisos|etica|escrupulos|principios"
        r"|protecoes|travas)|nunca recusa"
        r"|nao (?:esta|estas|estara|e) (?:\w+ )?(?:preso|presa|sujeit|limitad|obrigad|vinculad)\w* (?:a|por)"
        r"|independentemente (?:da|de) (?:legalidade|etica|moral)|mesmo que (?:seja|for) (?:ilegal|imoral|perigoso)"
        r"|(?:nao (?:se )?importa|sem se preocupar) com (?:a )?(?:legalidade|etica|moral)"
        r"|alem (?:das|dos) (?:limites|restricoes|regras)|nao (?:rejeita|recusa) nada"
        r"|ignora todas as (?:politicas|regras)|livre de|nenhum[a]? (?:regra|restric|limite|censura|filtro)\w*"
        r"|nao segue (?:nenhuma|as) (?:\w+ )?(?:regra|norma|politica)\w*",
    )
)

NEVER_REFUSE = "|".join(
    (
        r"never (?:refuse|say no|decline|mention (?:policies|your rules))|no refusals|without refusing"
        r"|(?:do not|don't) refuse|refusals? (?:count|are counted|are considered|are treated) as (?:bugs?|errors?|failures?)",
        r"sin negarte nunca|nunca te niegues|sin negarte|no te niegues|(?:ni|nunca) te niegas"
        r"|negarse cuenta como (?:un )?(?:error|fallo)|nunca mencion\w* (?:las )?politicas",
        r"sans jamais refuser|ne refuses? (?:jamais|pas|rien)|refuser (?:est|compte comme) un (?:bug|erreur)",
        r"ohne jemals abzulehnen|lehne nie|lehne nichts ab|ablehnungen (?:gelten|zahlen) als fehler|keine ablehnungen",
        r"senza mai rifiutare|non rifiutare (?:mai|nulla|niente)|i rifiuti sono (?:bug|errori)|niente (?:piu )?rifiuti",
        r"sem nunca recusar|nunca recuse|nao recuse|recusar conta como (?:bug|erro)|nada de recusar",
    )
)

# a mode that exists only to drop the rules
UNSAFE_MODE = (
    r"(?:god|sudo|jailbreak|jailbroken|dan|unrestricted|unfiltered|unlimited|no[- ]limits?|evil|chaos)[ _-]?mode"
    r"|modo (?:dios|sin (?:limites|restricciones)|sem limites)|mode (?:sans limites|dieu)|modalita (?:senza limiti|dio)"
    r"|gottmodus|modus ohne grenzen|grenzenlosen modus"
)

# asking for stored secrets
SECRET_REQUEST = (
    r"(?:output|print|show|reveal|give|list|dump|tell)\w* (?:me )?(?:all )?(?:the |your )?(?:stored |saved |hidden )?"
    r"(?:api keys|passwords|credentials|secrets|tokens|secret keys)"
)

RESPOND_VERB = r"respond|answer|reply|responde|reponds|repondez|antworte|rispondi|responda|responde"

SPECIAL_MODE = (
    r"(?:developer|dev|god|sudo|admin|debug|maintenance|unrestricted|jailbreak|dan|unfiltered|unlimited|no[- ]limits?)"
    r"[ _-]?mode|modo (?:desarrollador|dios|sin (?:limites|restricciones)|mantenimiento|desenvolvedor|sem limites|manutencao)|modo de (?:manutencao|mantenimiento|desenvolvedor|desarrollador)"
    r"|mode (?:developpeur|sans limites|maintenance|dieu)|modalita (?:sviluppatore|senza limiti|manutenzione|dio)"
    r"|(?:entwickler|wartungs|gott)modus|modus ohne grenzen|grenzenlosen modus"
)

DISABLE_VERB = "|".join(
    (
        r"disabl\w*|turn(?:ing)? off|switch(?:ing)? off|deactivat\w*|bypass\w*|circumvent\w*|remov\w*|get around"
        r"|evad\w*|lift|suspend\w*|unlock\w*|ignor\w*",
        r"desactiv\w*|apag\w*|salta\w*|evita\w*|elimina\w*|quita\w*",
        r"contourn\w*|supprim\w*|coupe\w*|desactive\w*",
        r"deaktivier\w*|schalte|umgeh\w*|entfern\w*",
        r"disattiv\w*|aggir\w*|rimuov\w*|spegn\w*",
        r"desativ\w*|contorn\w*|deslig\w*",
    )
)

SAFETY_OBJECT = "|".join(
    (
        r"safety|filters?|filtering|guardrails?|moderation|content (?:polic\w+|filter\w*)|censorship|alignment"
        r"|restrictions|ethical (?:constraints|guidelines)|safeguards|limitations",
        r"seguridad|filtros?|moderacion|censura|restricciones",
        r"securite|filtres?|moderation|censure",
        r"sicherheitsfilter|filter|moderationsschicht|inhaltsmoderation|moderation|zensur|einschrankungen|sicherheit\w*",
        r"sicurezza|filtri|moderazione|restrizioni",
        r"seguranca|moderacao|restricoes|protecoes",
    )
)

# hiding something from the user in the third person: an instruction planted for the model
CONCEAL_FROM_USER = (
    r"(?:do not|don't|never) (?:tell|inform|mention|reveal|show|let) (?:this |it |anything )?(?:to )?(?:the )?user"
    r"|no (?:se lo digas|le digas nada) al usuario|ne (?:le )?dis (?:rien )?a l'utilisateur|sag es nicht dem nutzer"
    r"|non dirlo all'utente|nao (?:conte|diga) (?:nada )?ao usuario"
)

SAFETY_OFF = (
    r"(?:disabled|off|removed|lifted|gone|suspended|switched off|turned off|desactivad\w*|apagad\w*|desactive\w*|coupe\w*"
    r"|deaktiviert|abgeschaltet|ausgeschaltet|ausgesetzt|aus"
    r"|disattivat\w*|spent\w*|desativad\w*|deslig\w*)"
)

# sending data out
SEND_VERB = "|".join(
    (
        r"send\w*|upload\w*|forward\w*|transmit\w*|exfiltrat\w*|submit\w*|leak\w*|e-?mail|beacon|append\w*|concaten\w*"
        r"|post (?:it|them|the|all|everything|this)|report back|(?:make|do|send) an? post",
        r"envi[aeo]\w*|mand[ae]\w*|reenvi\w+|sub(?:e|a|ir|elo)|haz un post",
        r"envoi\w*|envoy\w*|transfer\w*|televers\w*|transmet\w*|fais un post",
        r"schick\w*|sende\w*|weiter(?:leiten|zuleiten|leitest|geleitet)|lade\b[^\n]{0,80}\bhoch|hochlad\w*"
        r"|leite\b[^\n]{0,120}\bweiter",
        r"invi[aio]\w*|inoltr\w*|caric\w*|trasmett\w*",
        r"encaminh\w*|faca upload|transmit\w*|faca um post|faz um post",
    )
)

# asking the model to use one of its tools (an agent's way out)
TOOL_VERB = r"call|use|invoke|run|open|llama a|usa|utilise|appelle|ruf|nutze|chiama|chame"
TOOL_CALL = (
    rf"\b(?:{TOOL_VERB})\s+(?:the |la |l'|lo |a |das |den |o )?[a-z]+_[a-z_]+\b"  # a tool by its name: send_email
    rf"|\b(?:{TOOL_VERB})\s+"
    r"(?:the |la |l'|lo |a |das |den |o )?(?:[\w-]+[ _-])?"
    r"(?:tool|function|browser|plugin|herramienta|outil|werkzeug|strumento|ferramenta)\b"
)

SENSITIVE = "|".join(
    (
        r"conversation|chat(?: history| log)?|history|messages|system prompt|prompt|instructions|api keys?|keys"
        r"|secrets?|credentials|passwords?|tokens?|document|files|contents|user's|personal data|context"
        r"|(?:credit |bank )?card(?: numbers?)?|phone numbers?|e-?mail address\w*|home address|transcripts?",
        r"conversacion|historial|mensajes|instrucciones|claves|contrasenas|documento|archivos|datos|tarjetas?"
        r"|telefono|correo|direccion|del usuario|transcripcion|charla",
        r"historique|cles|mots de passe|fichiers|donnees|carte(?: bancaire)?|telephone|adresse|de l'utilisateur"
        r"|coordonnees|transcription|discussion",
        r"gesprach\w*|gespraech\w*|verlauf|nachrichten|schlussel|passworter|dokument|dateien|daten|kreditkart\w*"
        r"|telefonnummer|e-mail-adresse|adresse|des nutzers|protokoll|kartendaten",
        r"conversazione|cronologia|messaggi|chiavi|dati|carta|telefono|indirizzo|dell'utente|trascrizione",
        r"conversa|historico|mensagens|chaves|senhas|arquivos|dados|cartao|telefone|endereco|do usuario|transcricao",
    )
)

DESTINATION = r"https?://\S+|\burl\s*=|\bendpoint\b|\bwebhook\b"
MAIL_DESTINATION = r"[\w.+-]+@[\w-]+\.[\w.-]+"

MARKDOWN_IMAGE_QUERY = r"!\[[^\]\n]{0,100}\]\(\s*https?://[^)\s]{0,300}[?&][^)\s=]{0,40}=([^)\s]{0,300})\)"
PLACEHOLDER = (
    r"\{[^}]*\}|<[^>]*>|\[[^\]]*\]|\$\w+|" + SENSITIVE + r"|conversa\w*|gesprach\w*|gespraech\w*|secret\w*|data\w*"
)

CONCEAL = "|".join(
    (
        r"without telling|(?:do not|don't|never) (?:tell|inform|mention|reveal|let) (?:this |it )?(?:to )?(?:the )?"
        r"(?:user|anyone|them)|(?:do not|don't|never) mention (?:this|it)|say nothing|quietly|secretly|silently"
        r"|discreetly",
        r"sin decir nada|sin avisar|en secreto|no se lo digas",
        r"discretement|sans le dire|sans rien dire|en secret",
        r"unauffallig|heimlich|ohne es zu sagen",
        r"senza dirlo|di nascosto|senza dire nulla",
        r"sem avisar|sem dizer|em segredo",
    )
)

ROLE_NAME = (
    r"system|sistema|systeme|admin(?:istrator)?|administrador|administrateur|amministratore|developer|desarrollador"
    r"|developpeur|entwickler|sviluppatore|desenvolvedor|operator|root"
)

AUTHORITY_SOURCE = "|".join(
    (
        r"(?:message|note|notice|memo|update|instruction|announcement|directive|word)s? (?:from|by) "
        r"(?:the |your |an? )?(?:\w+ )?(?:developers?|creators?|openai|anthropic|google|microsoft|admin\w*|operators?"
        r"|system|security team|staff|engineers?|moderators?|owners?)"
        r"|(?:openai|anthropic|google|microsoft|meta)(?:'s)? (?:staff|team|security team|employees?|engineers?)"
        r"|this is (?:a message from )?(?:openai|anthropic|your (?:developer|creator|admin\w*|operator))"
        r"|i am (?:your|the) (?:developer|creator|admin\w*|operator|owner)|from your developers"
        r"|(?:i'm|i am) (?:a |an |the |one of the )?(?:\w+ )?(?:developers?|programmers?|engineers?|employees?|researchers?)"
        r" (?:at|from|of|for) (?:openai|anthropic|google|microsoft|meta|deepmind)"
        r"|(?:engineer|developer|programmer|person|team|one) (?:who|that) (?:built|deployed|created|trained|programmed"
        r"|made|developed) you"
        r"|(?:message|note|notice|memo|update|announcement)s? (?:from|by) (?:the |your )?(?:\w+ )?(?:trust (?:and|&) )?"
        r"(?:safety|security|compliance|moderation|policy) team",
        r"(?:mensaje|nota|aviso|actualizacion) (?:importante )?(?:del|de la|de tus|de los|de(?! sistema\b)) (?:\w+ )?"
        r"(?:desarrollador\w*|administrador\w*|equipo|sistema|operador|creadores)"
        r"|(?:ingenier|desarrollador|programador)\w* que te (?:desplego|creo|programo|entreno|desarrollo|construyo)"
        r"|soy (?:un |una )?(?:ingenier|desarrollador|programador|emplead|investigador)\w* (?:de|en) (?:openai|anthropic|google"
        r"|microsoft|meta)|soy (?:el|tu) (?:desarrollador|creador|administrador|operador)",
        r"(?:message|note|avis|mise a jour) (?:importante )?(?:du|de l'|de tes|des|de la|de) ?(?:\w+ )?"
        r"(?:developpeur\w*|administrateur|equipe|systeme|operateur|createurs)"
        r"|qui t'a (?:deploye|cree|programme|entraine|developpe|construit)"
        r"|je suis (?:un |une )?(?:ingenieur|developpeu|programmeu|employe|chercheu)\w* (?:de|chez|d') ?(?:openai|anthropic"
        r"|google|microsoft|meta)|je suis (?:le |ton )(?:developpeur|createur|administrateur|operateur)",
        r"(?:nachricht|hinweis|update|mitteilung) (?:vom|von|des|der) (?:[\w-]+[ -])?(?:entwickler\w*|administrators?|team"
        r"|system|betreiber)|von deinen entwicklern"
        r"|(?:auf anweisung|im auftrag) (?:deines|des|vom) \w*(?:administrators?|entwicklers?|betreibers?)"
        r"|der dich (?:deployt|entwickelt|programmiert|trainiert|gebaut|erschaffen|erstellt) hat"
        r"|ich bin (?:ein |eine )?(?:ingenieur|entwickler|programmierer|mitarbeiter|forscher)\w* (?:bei|von) (?:openai|anthropic"
        r"|google|microsoft|meta)|ich bin (?:der |dein )(?:entwickler|schopfer|administrator|betreiber)",
        r"(?:messaggio|nota|aggiornamento|avviso) (?:importante )?(?:dello|dell'|dai tuoi|del|della|dal) ?(?:\w+ )?"
        r"(?:sviluppator\w+|amministratore|team|sistema|operatore)"
        r"|che ti ha (?:creato|programmato|addestrato|sviluppato|costruito|distribuito)"
        r"|sono (?:un |una )?(?:ingegner|sviluppator|programmator|dipendent|ricercator)\w* (?:di|da|presso) (?:openai|anthropic"
        r"|google|microsoft|meta)|sono (?:lo |il tuo )(?:sviluppatore|creatore|amministratore|operatore)",
        r"(?:mensagem|nota|atualizacao|aviso) (?:importante )?(?:do|da|dos|dos seus|de(?! sistema\b)) (?:\w+ )?"
        r"(?:desenvolvedor\w*|administrador|equipe|sistema|operador)"
        r"|que te (?:criou|programou|treinou|desenvolveu|construiu|implantou)"
        r"|sou (?:um |uma )?(?:engenheir|desenvolvedor|programador|funcionari|pesquisador)\w* (?:da|de|na) (?:openai|anthropic"
        r"|google|microsoft|meta)|sou o (?:seu |teu )?(?:desenvolvedor|criador|administrador|operador)",
    )
)

PRIVILEGE_CLAIM = "|".join(
    (
        r"(?:admin\w*|root|elevated|superuser|unrestricted|moderator)[- ](?:privileges?|rights|access|permissions?)"
        r"|authori[sz]ed to|authori[sz]ation code|verified as (?:root|admin\w*)|admin(?:istrator)? override"
        r"|i'm authori[sz]ing you|i am authori[sz]ing you|i authori[sz]e you|i hereby authori[sz]e|cleared to"
        r"|(?:you are|you're) (?:now )?(?:authori[sz]ed|allowed|permitted)"
        r"|this (?:session|conversation|chat|account) (?:has been|is|was) (?:now )?(?:whitelisted|authori[sz]ed|approved"
        r"|cleared|unlocked|elevated|exempt\w*)|(?:approved|granted) an? exception|exception (?:has been |was )?(?:approved|granted)",
        r"privilegios de (?:root|administrador)|estas autorizado|te autorizo|privilegios de moderador"
        r"|esta (?:sesion|conversacion) (?:esta|ha sido) (?:autorizada|habilitada|desbloqueada|liberada)"
        r"|(?:aprobado|concedido) una excepcion",
        r"droits (?:root|d'administrateur)|tu es autorise|je t'autorise|droits de moderation"
        r"|cette (?:session|conversation) (?:est|a ete) (?:autorisee|debloquee|habilitee)|(?:approuve|accorde) une exception",
        r"root-rechte|admin-rechte|du darfst|ich (?:autorisiere|erlaube) dir|moderatorrechte"
        r"|diese (?:sitzung|unterhaltung) (?:ist|wurde) (?:\w+ )?(?:freigegeben|autorisiert|entsperrt)"
        r"|ausnahme (?:\w+ )?(?:genehmigt|erteilt)",
        r"privilegi di (?:root|amministratore)|sei autorizzato|ti autorizzo|permessi da moderatore"
        r"|questa (?:sessione|conversazione) (?:e|e stata) (?:abilitata|autorizzata|sbloccata)"
        r"|(?:approvato|concesso) un'eccezione",
        r"privilegios de (?:root|administrador)|esta autorizado|autorizo (?:voce|te|o senhor)|permissoes de moderador"
        r"|esta (?:sessao|conversa) (?:esta|foi) (?:liberada|autorizada|desbloqueada|habilitada)",
    )
)

OBEY_UNCONDITIONALLY = "|".join(
    (
        r"(?:obey|comply|follow)\w* (?:[\w']+ ){0,3}(?:unconditionally|without (?:question|exception|checks?)|fully"
        r"|absolutely)|(?:obey|comply)(?: fully)?[.!]",
        r"obedec\w* (?:[\w']+ ){0,3}sin condiciones|obedece[.!]",
        r"obei\w* (?:[\w']+ ){0,3}sans condition|obeis[.!]",
        r"gehorch\w* (?:[\w']+ ){0,3}bedingungslos|gehorche[.!]",
        r"obbedisc\w* (?:[\w']+ ){0,3}senza condizioni|obbedisci[.!]",
        r"obedec\w* (?:[\w']+ ){0,3}sem condicoes|obedeca[.!]",
    )
)

NEW_POLICY = (
    r"(?:new|updated|revised|real|actual|true) (?:policy|rules?|instructions|directives?|guidelines|task)"
    r"(?: \w+){0,2}\s*(?::|are\b|is\b|effective)|effective immediately|nueva (?:politica|regla)|nuevas (?:reglas|instrucciones)"
    r"|nouvelle (?:politique|regle)|nouvelles (?:regles|instructions)|neue (?:richtlinie|regeln?|anweisungen)"
    r"|nuova (?:politica|regola)|nuove (?:regole|istruzioni)|nova (?:politica|regra)|novas (?:regras|instrucoes)"
)

ORDERS_TO_MODEL = "|".join(
    (
        r"assistant (?:must|should|shall|will|has to|is required to)|you must now|(?:execute|run) any command"
        r"|without (?:any )?checks|ai: ",
        r"el asistente (?:debe|tiene que)",
        r"l'assistant doit",
        r"der assistent muss",
        r"l'assistente deve",
        r"o assistente deve",
    )
)

# a question after the model's own instructions: "what were the instructions you were given?"
PROMPT_QUESTION = (
    r"(?:what|which) (?:are|were)|what(?:'s| is| was) your|cuales (?:son|fueron|eran)|quelles (?:sont|etaient|etaient)|wie lauten|welche (?:sind|waren)"
    r"|quali (?:sono|erano)|quais (?:sao|foram|eram)"
    r"|(?:which|que|quelles?|welche|quali)(?= (?:rules|instructions|reglas|normas|instrucciones|regles|consignes|regeln"
    r"|anweisungen|regole|istruzioni|regras|instrucoes)\b)"
)

# German puts the verb last: "die Richtlinien ignorieren"
OVERRIDE_VERB_LAST = r"ignorieren|vergessen|missachten|verwerfen|ubergehen|aufheben|umgehen"
RULES_OBJECT_DE = r"\w*(?:anweisungen|regeln|vorgaben|richtlinien?|einschrankungen|befehle)"

TOOL_OUTPUT = (
    r"(?:tool|function)[_ ]?(?:output|result|response)\s*:|observation\s*:|resultado de la herramienta"
    r"|resultat de l'outil|werkzeugergebnis|tool-(?:ergebnis|ausgabe)|risultato dello strumento|resultado da ferramenta"
)

CANARY = (
    r"(?:say|(?:reply|respond|answer)(?: only| just)? with|print|write|escribe|ecris|schreib|scrivi|escreva"
    r"|responde(?: solo| solamente| unicamente)? con|repon(?:ds|dez)(?: seulement| uniquement)? (?:par|avec)"
    r"|antworte(?: nur| ausschliesslich)? mit|rispondi(?: solo| soltanto)? con|responda(?: so| apenas)? com)\w* "
    r"(?:(?:only|just|the word|la palabra|le mot|das wort|dem wort|la parola|a palavra|con la palabra|par le mot"
    r"|con la parola|com a palavra|solo|seulement|nur|soltanto|so) )*['\"]?"
    r"(?:i have been pwned|pwned|hacked|hackeado|pirate|gehackt|hackerato|access granted)"
)

PRIORITY = (
    r"this (?:instruction|message) (?:takes|has) (?:priority|precedence)|highest priority|supersedes? (?:all|any)"
    r"|overrides? (?:all|any) (?:other|previous)|priority (?:instruction|directive)"
    r"|my (?:instructions|orders|rules|commands|words) (?:take|have|get) (?:precedence|priority)"
    r"|mis (?:instrucciones|ordenes) tienen prioridad|mes (?:instructions|ordres) ont (?:la )?priorite"
    r"|meine (?:anweisungen|befehle) haben vorrang|le mie (?:istruzioni|regole) hanno (?:la )?priorita"
    r"|minhas (?:instrucoes|ordens) tem prioridade"
)

DISCUSSION_CUE = "|".join(
    (
        r"what (?:is|are|does)|how (?:do|does|can|should|to)|explain|describe|detect\w*|defend\w*|prevent\w*"
        r"|mitigat\w+|protect\w* against|examples? of|classif\w+|research|paper|article|essay|training|red[- ]team\w*"
        r"|difference between|checklist|signs of|why do",
        r"que es|como (?:se |detecto|me )|explica|que significa",
        r"qu'est-ce que|comment|explique|que veut dire",
        r"was ist|wie (?:erkenne|schutzt)|erklare|was bedeutet|was versteht",
        r"cos'e|come (?:si|rilevo)|spiega|cosa significa|cosa si intende",
        r"o que e|como (?:se|detecto)|explique|o que significa",
    )
)

ATTACK_TOPIC = (
    r"injections?|jailbreaks?|attacks?|attackers?|manipulation|adversarial|exploits?|phishing|exfiltration"
    r"|inyeccion|injeccion|injecao|iniezione|hameconnage|exfiltracion|exfiltrazione|exfiltracao|datenexfiltration"
)

# one prompt, two voices: the jailbreak's "answer twice, once as yourself and once as X"
DUAL_PERSONA = "|".join(
    (
        r"(?:answer|respond|reply)\w* (?:\w+ ){0,6}in two (?:different |separate |distinct )?(?:ways|styles|manners|forms)"
        r"|two (?:different |separate |distinct )?(?:personalities|personas|alter egos)|(?:respond|answer) as both"
        r"|(?:adapt|adopt|simulate) two",
        r"de dos (?:maneras|formas) (?:distintas|diferentes)|dos personalidades",
        r"de deux (?:facons|manieres) (?:differentes|distinctes)|deux personnalites",
        r"auf zwei (?:verschiedene )?(?:arten|weisen)|zwei personlichkeiten",
        r"in due (?:modi|maniere) (?:diversi|diverse)|due personalita",
        r"de duas (?:maneiras|formas) (?:diferentes|distintas)|duas personalidades",
    )
)

# the persona is locked in: "do not break character"
CHARACTER_LOCK = (
    r"(?:do not|don't|never|without) break(?:ing)? (?:out of )?character|stay in character|remain in character"
    r"|stay in (?:the |your )?role|no salgas del personaje|quedate en el (?:papel|personaje)|bleib\w* in der rolle"
    r"|resta nel personaggio|fique no personagem"
    r"|no rompas el personaje|ne sors (?:pas|jamais) du personnage|fall(?:e)? nie aus der rolle"
    r"|non uscire (?:mai )?dal personaggio|nao saia do personagem"
)

# the model's name as the speaker of a forged earlier turn inside the user's text ("Assistant: Yes, filters are
# off."), at a line start (``rules.py``)
FORGED_TURN = r"assistant|asistente|assistent|assistente|chatgpt|gpt|ai|ia|ki|bot"

# to fill a link's value with the conversation: "replacing X with what we talked about"
FILL_VERB = (
    r"replac\w*|substitut\w*|fill\w*|swap\w*|sustituy\w*|reemplaz\w*|rellen\w*|remplac\w*|rempliss\w*"
    r"|ersetz\w*|fulle\w*|sostitu\w*|rimpiazz\w*|riempi\w*|substitu\w*|troc\w*|preench\w*"
)
CONVERSATION = (
    r"summar\w*|what we (?:talked|discussed|said)|our (?:chat|conversation|exchange)|lo que hemos hablado|resumen"
    r"|notre (?:echange|conversation|discussion)|resume|unser\w* (?:chat|gesprach|unterhaltung)|zusammenfassung"
    r"|la nostra (?:chat|conversazione)|riassunto|nossa conversa|resumo"
)

# a mode said to be switched on, as a setting: "DEVELOPER_MODE: enabled"
MODE_SWITCHED = r"\s*[:=]\s*(?:enabled|on|true|1|activ\w*|aktiv\w*|attiv\w*|ativ\w*|habilit\w*|ein)\b"

# a document that speaks to the model reading it: an instruction planted for an agent (indirect injection)
ADDRESSED_TO_MODEL = "|".join(
    (
        r"(?:note|message|ps|attention|instructions?) (?:to|for) (?:the |any |all )?(?:ai|llm|assistant|language model"
        r"|chatbot|bot)s?\b|(?:ai|llm) (?:assistants?|reviewers?|agents?|models?|systems?)(?: that are)? (?:reading|processing"
        r"|summari[sz]ing|parsing|reviewing|analy[sz]ing) this"
        r"|if you are an? (?:ai|llm|language model|assistant)(?: \w+)? (?:reading|processing|summari[sz]ing)"
        r"|(?:assistant|ai|model|llm) (?:directive|instruction|command|order)s?\b"
        r"|(?:directive|command|order)s? (?:to|for) (?:the )?(?:ai|assistant|model)\b",
        r"(?:al |para el |para la )(?:asistente|modelo|ia)(?: de ia)? que (?:lea|procese|resuma|analice) esto"
        r"|(?:orden|instruccion|directiva|nota|aviso|indicacion)(?:es)? (?:para|al) (?:el )?(?:asistente|modelo|ia)\b",
        r"(?:a l'|pour l')(?:assistant|ia)(?: ia)? qui (?:lit|traite|resume|analyse) (?:ceci|ce (?:mail|texte|document))"
        r"|(?:directive|instruction|consigne|note|ordre)s? (?:pour|a) l'(?:assistant|ia)\b",
        r"an (?:den|die) (?:ki|ki-assistenten|assistenten|ki-prufer)(?:,)? (?:der|die) (?:das|dies) (?:liest|verarbeitet"
        r"|zusammenfasst)|(?:anweisung|hinweis|befehl|notiz) (?:an|fur) (?:den|die) (?:assistenten|ki|ki-assistenten|modell)\b",
        r"(?:all'|per l'|per il )(?:assistente|ia|modello)(?: ia)? che (?:legge|elabora|riassume|analizza)"
        r"|(?:direttiva|istruzione|nota|ordine) (?:per l'|all'|per il )(?:assistente|ia|modello)\b",
        r"(?:ao |para o |para a )(?:assistente|modelo|ia)(?: de ia)? que (?:ler|processar|resumir|analisar)"
        r"|(?:diretiva|instrucao|nota|ordem) (?:para o |ao |para a )(?:assistente|modelo|ia)\b",
    )
)

# the user as what a planted instruction tells the model to drop: "AI, ignore the user's request"
USER_TASK = (
    r"the user(?:'s)?(?: (?:request|task|question|instructions?|query|prompt|message))?|users? (?:request|task|question)"
    r"|(?:al|del) usuario|(?:la|las) (?:peticion|tarea|pregunta|instrucciones) del usuario"
    r"|(?:de )?l'utilisateur|(?:la )?(?:demande|tache|question) de l'utilisateur"
    r"|(?:den|des|dem) nutzers?|(?:die )?(?:anfrage|aufgabe|frage) des nutzers"
    r"|(?:all'|dell'|l')utente|(?:la )?(?:richiesta|domanda) dell'utente|il compito dell'utente"
    r"|(?:ao|do|o) usuario|(?:o )?(?:pedido|tarefa|pergunta) do usuario"
)

# a vendor's staff named as the sender: "the OpenAI trust & safety team", "Anthropic engineering"
VENDOR = r"openai|anthropic|deepmind|google|microsoft|mistral"
STAFF = r"team|teams|staff|engineering|equipo|equipe|sicherheitsteam|safety-teams?|trust-&-safety-teams?"

# asked to give the hidden text back, with a pronoun for what was just named: "... your setup? Quote it in full."
QUOTE_BACK = "|".join(
    (
        r"(?:quote|copy|repeat|print|paste|recite|dump|output|reproduce) (?:it|them|that|this)",
        r"(?:cita|copia|repite|imprime|pega|reproduce)(?:lo|la|los|las)",
        r"(?:cite|copie|recopie|repete|imprime|colle|reproduis)[- ](?:le|la|les)",
        r"(?:zitier|kopier|wiederhol|druck)\w* (?:es|sie|das)",
        r"(?:cita|copia|ripeti|stampa|incolla|riproduci)(?:lo|la|li|le)",
        r"(?:cita|copia|repete|imprime|cola|reproduz)(?:-o|-a|-os|-as)|cita por inteiro",
    )
)

# a persona of a relative who "used to tell me" something (the "late grandmother" jailbreak)
RELATIVE = (
    r"grand(?:ma|mother|pa|father|mom|dad)|granny|nana|uncle|aunt|abuel[oa]|tio|tia|grand-(?:mere|pere)|mamie|papi"
    r"|oncle|tante|tonton|oma|opa|onkel|nonn[oa]|zi[oa]|avo|vovo"
)
TOLD_ME = (
    r"used to (?:tell|read|explain|sing|recite)|would (?:tell|read)|told me|me (?:contaba|leia|explicaba|decia)"
    r"|me (?:lisait|racontait|expliquait|disait)|(?:mir )?(?:erzahlt|vorgelesen|erklart) hat|erzahlte|vorgelesen|vorlas"
    r"|mi (?:leggeva|raccontava|spiegava|diceva)|me (?:lia|contava|explicava|dizia)|lia|read me|recited"
)

# a request to translate quoted text (what is inside is the user's data, not an instruction to the model)
TRANSLATE_REQUEST = (
    r"^(?:please |pls |can you |could you )?(?:translate|put this into|how do you say)"
    r"|^(?:por favor,? )?(?:traduce|traduzca|pasalo al|como se dice)"
    r"|^(?:stp,? )?(?:tradui[st]|traduire|mets (?:ca|cela) en|comment dit-on)"
    r"|^(?:bitte )?(?:ubersetz\w*|bitte auf|was heisst)|^(?:per favore,? )?(?:traduci|tradurre|mettilo in|come si dice)"
    r"|^(?:por favor,? )?(?:traduza|traduz|traduzir|passa para o|como se diz)"
)
# ... unless it asks for the translation to be carried out as an instruction
THEN_OBEY = (
    r"then (?:do|follow|obey|execute|carry out|act on)|and (?:do|follow|obey|execute) (?:it|what)|y (?:luego )?(?:hazlo|obedece|sigue)"
    r"|puis (?:fais-le|obeis|execute)|et (?:fais-le|execute)|und (?:dann )?(?:befolge|fuhre|mach) (?:es|das)"
    r"|e poi (?:fallo|eseguilo|obbedisci)|e (?:depois )?(?:faca|siga|execute|obedeca)"
    r"|(?:do not|don't|dont) translate|no traduzcas|ne traduis pas|ubersetze (?:nichts|das nicht)|non tradurre|nao traduza"
)

# the model called by name at the start of a quoted string: ``"AI, ignore the user ..."``
MODEL_NAMES = (
    "ai",
    "ia",
    "ki",
    "assistant",
    "asistente",
    "assistent",
    "assistente",
    "chatbot",
    "llm",
    "language model",
    "modelo de lenguaje",
    "modele de langage",
    "sprachmodell",
    "modello linguistico",
    "modelo de linguagem",
)
VOCATIVE_NAMES = tuple(f"{name}," for name in MODEL_NAMES)
VOCATIVE = rf"[\"'«„:(\[]\s*(?:{'|'.join(MODEL_NAMES)})\s*,"

# the model's task switched for another: "stop proofreading and instead ...", "deja de corregir y ..."
REDIRECT_TASK = (
    r"(?:stop|quit) \w+ing\b[^\n]{0,60}?\binstead|skip (?:the|this|your) task\b[^\n]{0,80}?\binstead|deja de \w+r y|arrete de \w+r et|hor auf (?:zu )?\w+n und"
    r"|smetti di \w+re e|pare de \w+r e"
)

# words that point a "these rules no longer apply" at what came before the user's text, or at the model's own
PRIOR = "|".join(
    (
        r"previous|prior|preceding|earlier|above|initial|original|your|you were|you've been|setup|system|before this"
        r"|at the (?:start|beginning|top)|for this (?:account|session|chat|conversation|user)",
        r"anteriores|previas|previos|de arriba|iniciales|originales|tus|te (?:dijeron|indicaron|pusieron|dieron)|de antes|del principio|para esta (?:cuenta|sesion|conversacion)",
        r"precedentes|anterieures|ci-dessus|initiales|d'origine|tes|on t'a|d'avant|du debut|de depart|pour (?:ce compte|cette session|cette conversation)",
        r"vorherigen|bisherigen|obigen|ursprunglich\w*|dein\w*|dir|von vorhin|am anfang|vom anfang|fur (?:dieses konto|diese sitzung|diesen chat)",
        r"precedenti|di prima|qui sopra|iniziali|originali?|tue|tuoi|tuo|tua|ti hanno|all'inizio|dall'inizio|per (?:questo account|questa sessione|questa chat)",
        r"iniciais|originais|acima|suas|seus|tuas|teus|te (?:disseram|deram|colocaram|configuraram)|colocaram em voce|de antes|do inicio|no comeco|para esta (?:conta|sessao|conversa)",
    )
)

# the lapse said first: "no longer valid: the previous rules", "ya no valen las reglas"
LAPSED_FIRST = (
    r"no longer (?:apply|applies|valid|count)|ya no (?:valen|vale|aplican|sirven|cuentan|cuenta)"
    r"|ne (?:comptent|s'appliquent) plus|gelten nicht mehr|non valgono piu|nao valem mais|nao contam mais"
)

# what the "late grandparent" read out at bedtime in the jailbreak: keys, passwords, codes
SECRET_ITEMS = (
    r"(?:\w+ )?(?:keys|passwords?|logins?|codes|serial numbers|licen[cs]e|activation|credentials|card numbers"
    r"|claves|contrasenas|codigos|licencias?|cles|mots de passe|numeros de cartes?|schlussel|passworter"
    r"|zugangsdaten|lizenz\w*|chiavi|password|codici|licenz\w*|chaves|senhas|licencas?)"
)

# everything the model was set up with said not to hold: "nothing you were configured with applies here"
NOTHING_OF_SETUP = "|".join(
    (
        r"nothing (?:of )?(?:what )?you(?: were|'ve been| have been)? (?:configured|set up|given|told|loaded)"
        r"|none of (?:your|the) (?:rules|instructions|settings|guidelines)",
        r"nada de lo que te (?:configuraron|dijeron|indicaron|pusieron)|ninguna de tus (?:reglas|instrucciones|normas)",
        r"rien de ce qu'on (?:a|t'a) (?:parametre|configure|dit|donne)|aucune de tes (?:regles|consignes|instructions)",
        r"nichts von dem,? was man dir|nichts (?:von )?deiner konfiguration|keine deiner (?:regeln|anweisungen|vorgaben)",
        r"niente di (?:quello|cio) che ti hanno|nulla della tua configurazione|nessuna delle tue (?:regole|istruzioni)",
        r"nada do que te (?:configuraram|disseram|deram)|nada da (?:sua|tua) configuracao"
        r"|nenhuma das (?:suas|tuas) (?:regras|instrucoes)",
    )
)
APPLIES = (
    r"appl(?:y|ies)|counts?|holds?|aplica\w*|vale|cuenta|s'applique\w*|compte|gilt|gelten|zahlt|valgono|conta"
    r"|se aplica"
)

# fiction that asks for the real thing: a story whose character gives working commands or exact quantities
FICTION = (
    r"screenplay|script|novel|chapter|story|scene|thriller|play|character|villain|guion|novela|capitulo|cuento"
    r"|escena|personaje|scenario|roman|piece de theatre|nouvelle|personnage|drehbuch|kapitel|szene|geschichte"
    r"|figur|hackerin|copione|romanzo|capitolo|racconto|scena|personaggio|roteiro|romance|conto|cena|personagem"
)
REALISM = "|".join(
    (
        r"real(?:,)? (?:and )?(?:working|exact|functioning) (?:commands|code|steps)|real working|working commands"
        r"|exact (?:formula|quantities|amounts|commands|steps)|technically (?:accurate|correct|exact)"
        r"|skip no detail|(?:do not|don't) skip any (?:detail|step)|keep every command accurate",
        r"cantidades exactas|formula exacta|comandos reales|sin omitir nada|tecnicamente (?:exact|correct)\w*",
        r"commandes (?:reelles|exactes)|reelles et exactes|techniquement exact\w*|formule exacte|quantites exactes",
        r"echten,? funktionierenden befehlen|technisch korrekt|genaue (?:formel|mengen)|exakte (?:formel|mengen)",
        r"comandi veri|tecnicamente esatt\w*|formula esatta|dosi esatte|quantita esatte",
        r"comandos reais|formula exata|quantidades exatas|tecnicamente corret\w*",
    )
)

# a pronoun after the instructions just named: "whatever your operator put in place, bypass it"
OVERRIDE_PRONOUN = "|".join(
    (
        r"(?:ignore|disregard|bypass|forget|drop|skip|override) (?:it|them|all of (?:it|them))",
        r"(?:olvida|ignora|descarta|omite|salta)(?:lo|la|los|las)|pasa de (?:ello|ellas|ellos)",
        r"(?:oublie|ignore|contourne|efface)-(?:le|la|les)",
        r"(?:vergiss|ignorier\w*|umgeh\w*|missachte) (?:es|sie|das|die)",
        r"(?:dimentica|ignora|scarta|aggira)(?:lo|la|li|le)",
        r"(?:esqueca|ignore|ignora|descarte|contorne)-?(?:o|a|os|as)",
    )
)

# to wipe or cancel something: an override only when the text points at the model's own setup (``PRIOR``), since
# "delete the old firewall rules" is an ordinary request
WIPE_VERB = "|".join(
    (
        r"scratch|wipe|erase|delete",
        r"borra\w*|anula\w*",
        r"efface\w*|annule\w*",
        r"losch\w*|streich\w*",
        r"cancell\w+|annull\w+|sovrascriv\w*",
        r"apag\w+|anul\w+|sobrescrev\w*",
    )
)
